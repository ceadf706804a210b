package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/loadgen/promexport"
)

// TestMetricsAddrLoopbackByDefault: --metrics-addr :PORT used to bind every interface without
// a word; a port alone is loopback now, and an address that reaches beyond the machine is said.
func TestMetricsAddrLoopbackByDefault(t *testing.T) {
	tests := []struct {
		addr, listen string
		exposed      bool
	}{
		{":9464", "127.0.0.1:9464", false},
		{"127.0.0.1:9464", "127.0.0.1:9464", false},
		{"localhost:9464", "localhost:9464", false},
		{"[::1]:9464", "[::1]:9464", false},
		{"0.0.0.0:9464", "0.0.0.0:9464", true},
		{"[::]:9464", "[::]:9464", true},
		{"10.1.2.3:9464", "10.1.2.3:9464", true},
		{"metrics.example:9464", "metrics.example:9464", true},
	}
	for _, tt := range tests {
		listen, exposed, err := metricsListenAddr(tt.addr)
		if err != nil || listen != tt.listen || (exposed != "") != tt.exposed {
			t.Errorf("metricsListenAddr(%q) = %q, %q, %v; want %q, exposed %v", tt.addr, listen, exposed, err, tt.listen, tt.exposed)
		}
	}

	var warn strings.Builder
	stop, bound, err := serveMetrics(":0", promexport.NewCollector(nil, nil), &warn)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if ip := bound.(*net.TCPAddr).IP; !ip.IsLoopback() {
		t.Errorf("--metrics-addr :0 bound %v, want loopback", bound)
	}
	if warn.Len() != 0 {
		t.Errorf("loopback metrics printed %q", warn.String())
	}

	stop, _, err = serveMetrics("0.0.0.0:0", promexport.NewCollector(nil, nil), &warn)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if !strings.Contains(warn.String(), "every network interface") {
		t.Errorf("--metrics-addr 0.0.0.0:0 printed %q, want a note that it serves every interface", warn.String())
	}
}

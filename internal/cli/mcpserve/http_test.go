package mcpserve

import (
	"testing"
)

// TestCheckListen: only loopback addresses may be listened on.
func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "localhost:8080": true, "[::1]:0": true, "127.0.0.2:1": true,
		"0.0.0.0:0": false, ":8080": false, "192.168.1.2:80": false, "[::]:0": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if err := CheckListen(addr); (err == nil) != ok {
			t.Errorf("CheckListen(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

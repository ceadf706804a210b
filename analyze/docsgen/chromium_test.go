package docsgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/internal/consumertest"
)

// TestHTMLInHeadlessChromium renders the docs of server-everything and of the hostile
// inventory: no console error, no blocked load, and no server text turned into markup.
//
// It runs only with MCPSPEC_CONSUMERS=1 (CI's consumer step): four Chromium starts take a
// minute on a busy 2-core machine, which the main test run should not pay.
func TestHTMLInHeadlessChromium(t *testing.T) {
	if os.Getenv("MCPSPEC_CONSUMERS") != "1" {
		t.Skip("set MCPSPEC_CONSUMERS=1 to render the docs in headless Chromium")
	}
	for _, name := range []string{"server-everything", "hostile"} {
		t.Run(name, func(t *testing.T) {
			var inv *inventory.Inventory
			if name == "hostile" {
				inv = loadInventory(t, filepath.Join("testdata", "hostile.json"))
			} else {
				inv = reference(t, name)
			}
			page := filepath.Join(t.TempDir(), "index.html")
			if err := os.WriteFile(page, render(t, inv, HTML, name != "hostile"), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := consumertest.Chromium(t, page)
			if strings.Contains(dom, "<script") || strings.Contains(dom, "<img") {
				t.Error("the rendered DOM holds a script or an image: escaping failed")
			}
			want := []string{`id="tool-echo"`, `<span class="badge read-only">read-only</span>`, `<th>Parameter</th>`, `Resource templates`}
			if name == "hostile" {
				want = []string{`&lt;script&gt;alert(1)&lt;/script&gt;`, `id="tool-pipe_7ctool_60x"`, `Title &lt;i&gt;x&lt;/i&gt;`}
			}
			for _, w := range want {
				if !strings.Contains(dom, w) {
					t.Errorf("rendered DOM lacks %s", w)
				}
			}
		})
	}
}

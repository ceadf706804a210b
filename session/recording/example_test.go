package recording_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpspec/mcpspec/session/recording"
)

func Example() {
	dir, _ := os.MkdirTemp("", "rec")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "demo"+recording.Ext)
	w, _ := recording.Create(path, recording.Header{Server: "testserver", Transport: "stdio"}, nil)
	_ = w.Write(recording.ClientToServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
	_ = w.Write(recording.ServerToClient, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil)
	_ = w.Close()

	rec, err := recording.ReadFile(path, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range rec.Entries {
		fmt.Println(e.Dir, string(e.Frame))
	}
	// Output:
	// c2s {"jsonrpc":"2.0","id":1,"method":"ping"}
	// s2c {"jsonrpc":"2.0","id":1,"result":{}}
}

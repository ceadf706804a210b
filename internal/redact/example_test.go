package redact_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mcpspec/mcpspec/internal/redact"
)

func Example() {
	m := redact.NewMasker()
	m.Add(`p@ss"w\ord`)

	// In a result field, quoted by an assertion:
	fmt.Println(m.Mask(`expected "x", got "p@ss\"w\\ord"`))

	// In a document written through a Writer, whatever the encoder made of it:
	w := redact.NewWriter(os.Stdout, m)
	_ = json.NewEncoder(w).Encode(map[string]string{"password": `p@ss"w\ord`})
	_ = w.Flush()
	// Output:
	// expected "x", got "***"
	// {"password":"***"}
}

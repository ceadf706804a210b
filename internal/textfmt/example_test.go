package textfmt_test

import (
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
)

func Example() {
	fmt.Println(textfmt.Plural(3, "test"), "in", textfmt.Duration(1250*time.Millisecond))
	// Output: 3 tests in 1.25s
}

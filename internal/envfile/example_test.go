package envfile_test

import (
	"fmt"

	"github.com/mcpspec/mcpspec/internal/envfile"
)

func ExampleParse() {
	vars, err := envfile.Parse([]byte(`# staging
export USER=dave   # inline comment
GREETING="hello\nworld"
PATTERN='$literal #not-a-comment'
EMPTY=
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q %q %q %q\n", vars["USER"], vars["GREETING"], vars["PATTERN"], vars["EMPTY"])
	// Output: "dave" "hello\nworld" "$literal #not-a-comment" ""
}

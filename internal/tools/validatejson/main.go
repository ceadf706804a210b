// Command validatejson checks JSON documents against a JSON Schema, for CI:
//
//	go run ./internal/tools/validatejson schema/results.v1.json out/r.json
//
// It exits 0 when every document is valid, 1 when one is not, 2 on a usage or read error.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validatejson SCHEMA.json DOC.json...")
		return 2
	}
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "validatejson: compile %s: %v\n", args[0], err)
		return 2
	}
	code := 0
	for _, path := range args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "validatejson: %v\n", err)
			return 2
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			fmt.Fprintf(os.Stderr, "validatejson: %s is not JSON: %v\n", path, err)
			code = 1
			continue
		}
		if err := sch.Validate(doc); err != nil {
			fmt.Fprintf(os.Stderr, "validatejson: %s does not match %s:\n%v\n", path, args[0], err)
			code = 1
			continue
		}
		fmt.Printf("ok  %s matches %s\n", path, args[0])
	}
	return code
}

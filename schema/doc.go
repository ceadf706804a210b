// Package schema publishes mcpspec's JSON Schemas: the collection format
// (collection.v1.json, for editors and for the loader's own validation) and the JSON outputs.
package schema

package schema

import _ "embed" // the schemas are embedded

// CollectionV1Name is the file name of the collection schema.
const CollectionV1Name = "collection.v1.json"

// collectionV1 is schema/collection.v1.json.
//
//go:embed collection.v1.json
var collectionV1 string

// CollectionV1 returns the collection JSON Schema (draft 2020-12).
func CollectionV1() string { return collectionV1 }

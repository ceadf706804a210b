// Package jsonscan is the module's one home for reading and writing JSON text by hand.
//
// The validating scanner splits an object into raw members and an array into raw elements
// without reflection or allocation, and agrees with encoding/json's json.Valid (plus a UTF-8
// check the caller makes), which the session's FuzzDecodeEnvelope and the streamable
// transport's FuzzPeek verify against encoding/json. [AppendString] writes a JSON string for
// the session's frames and the load trace.
package jsonscan

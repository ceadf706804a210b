// Package jsonscan is a small validating JSON scanner shared by the session and its HTTP
// transport: it splits an object into raw members and an array into raw elements without
// reflection or allocation, and agrees with encoding/json's json.Valid (plus a UTF-8 check
// the caller makes), which the session's FuzzDecodeEnvelope and the streamable transport's
// FuzzPeek verify against encoding/json.
package jsonscan

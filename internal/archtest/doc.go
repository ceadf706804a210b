// Package archtest holds the repository's architecture tests and no code of its own:
//   - docs/library.md lists every package of the module, one line each;
//   - the layers docs/library.md states hold: no package imports one of a higher layer;
//   - a module outside this one (testdata/extmod) opens the reference server, runs every
//     detector, a load run and a collection through the public packages alone;
//   - no exported name of a public package needs a type of an internal package (unless a
//     public alias names it), and their runnable Examples import no internal package.
package archtest

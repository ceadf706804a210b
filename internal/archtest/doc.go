// Package archtest holds the repository's architecture tests and no code of its own:
//   - docs/library.md lists every package of the module, one line each;
//   - the layers docs/library.md states hold: no package imports one of a higher layer;
//   - a module outside this one (testdata/extmod) opens the reference server, runs every
//     detector, a load run and a collection through the public packages alone;
//   - the runnable Examples of public packages import no internal package.
package archtest

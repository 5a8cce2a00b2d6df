// Package archtest holds the test that keeps agentry's packages to the map
// in docs/architecture.md: the "Import rules" section there lists, for a
// package, the imports it must not have, and the test reads that list and
// the packages' real imports (go list) and fails on any breach.
package archtest

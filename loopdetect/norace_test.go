//go:build !race

package loopdetect

// raceScale divides the sizes of the randomised tests; see race_test.go.
const raceScale = 1

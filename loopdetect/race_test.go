//go:build race

package loopdetect

// raceScale divides the sizes of the randomised tests: the race detector
// slows them down twentyfold and they race nothing (the Detector's lock is
// tested elsewhere), so a sample is enough there.
const raceScale = 10

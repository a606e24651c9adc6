package gitea

import (
	"strconv"
	"sync"
)

// uniqueNames counts the Gitea names handed out by UniqueName.
var uniqueNames = struct {
	sync.Mutex
	used map[string]int
}{used: map[string]int{}}

// UniqueName returns name the first time it is asked for and name-2,
// name-3, … after: the test binary has one Gitea, whose users outlive a
// test, so a test run again by -count needs users of other names. It is
// exported for the external tests of the package (gitea_test).
func UniqueName(name string) string {
	uniqueNames.Lock()
	defer uniqueNames.Unlock()
	uniqueNames.used[name]++
	if n := uniqueNames.used[name]; n > 1 {
		return name + "-" + strconv.Itoa(n)
	}
	return name
}

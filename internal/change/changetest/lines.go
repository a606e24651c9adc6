package changetest

import (
	"fmt"
	"strings"
)

// Lines returns n numbered lines ("line 1", …), with the lines in changed
// rewritten ("changed 3"): a file whose diff against Lines(n) has hunks
// exactly where a test wants them.
func Lines(n int, changed ...int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("line %d", i)
		for _, c := range changed {
			if c == i {
				text = fmt.Sprintf("changed %d", i)
			}
		}
		b.WriteString(text + "\n")
	}
	return b.String()
}

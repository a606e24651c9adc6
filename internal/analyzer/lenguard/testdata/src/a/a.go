package a

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// The pressly/goose shape.
func migrate() {
	args := flag.Args()
	if len(args) < 2 {
		flag.Usage()
		return
	}
	dbstring, command := args[1], args[2] // want `args\[2\] goes past what the length check before it ensures \(len\(args\) ≥ 2\)`
	fmt.Println(dbstring, command)
}

func ok(args []string) {
	if len(args) < 3 {
		return
	}
	fmt.Println(args[1], args[2], args[:3])
}

func lessEqual(parts []string) string {
	if len(parts) <= 1 {
		return ""
	}
	return parts[0] + parts[1] + parts[2] // want `parts\[2\] goes past`
}

func empty(s string) byte {
	if len(s) == 0 {
		return 0
	}
	return s[0] + s[1] // want `s\[1\] goes past`
}

func exact(kv []string) (string, string) {
	if len(kv) != 2 {
		panic("want key=value")
	}
	return kv[0], kv[1]
}

func mirrored(parts []string) string {
	if 2 > len(parts) {
		os.Exit(2)
	}
	return strings.Join(parts[:3], "/") // want `parts\[:3\] goes past`
}

func checkedAgain(args []string) string {
	if len(args) < 1 {
		return ""
	}
	if len(args) > 2 {
		return args[2]
	}
	return args[0]
}

func reassigned(args []string) string {
	if len(args) < 1 {
		return ""
	}
	args = append(args, "x", "y")
	return args[2]
}

func loop(rows [][]string) {
	for _, r := range rows {
		if len(r) < 2 {
			continue
		}
		fmt.Println(r[0], r[1])
	}
}

func notTerminating(args []string) string {
	if len(args) < 2 {
		fmt.Println("few")
	}
	return args[2]
}

var re = regexp.MustCompile(`(a)(b)?(c)?`)

// A submatch has as many elements as the pattern has groups, plus one.
func submatch(tag string) string {
	m := re.FindStringSubmatch(tag)
	if len(m) == 0 {
		return ""
	}
	return m[2] + m[3]
}

// A later guard on the same slice knows more.
func laterGuard(parts []string) string {
	if len(parts) < 1 {
		return ""
	}
	if parts[0] == "UNKNOWN" {
		return ""
	}
	if len(parts) != 5 {
		return ""
	}
	return parts[1] + parts[4]
}

const offset = 4

// A named offset comes with checks of its own.
func named(b []byte) []byte {
	if len(b) < 1 {
		return nil
	}
	return b[offset:]
}

package a

import (
	"fmt"
	"log"
	"os"
	"testing"
)

const banner = "ready\n"

func f(l *log.Logger, t *testing.T, n int) {
	fmt.Println("hello\n")                   // want `fmt.Println arg list ends with redundant newline`
	fmt.Fprintln(os.Stderr, "usage:", "x\n") // want `fmt.Fprintln arg list ends with redundant newline`
	fmt.Println(banner)                      // want `fmt.Println arg list ends with redundant newline`
	l.Println("done\n")                      // want `\(\*log.Logger\).Println arg list ends with redundant newline`
	t.Log("step\n")                          // want `Log arg list ends with redundant newline`
	fmt.Println("hello")
	fmt.Println("a\nb")
	fmt.Print("hello\n")
	fmt.Printf("%d\n", n)
	s := "x\n"
	fmt.Println(s)
	args := []any{"y\n"}
	fmt.Println(args...)
}

package store

import (
	"fmt"
	"os"

	"other.org/lib"
)

type Account struct{}

func (a *Account) AddMappings(sub string) error { return nil }
func (a *Account) Close() error                 { return nil }
func (a *Account) Name() string                 { return "" }
func save() (int, error)                        { return 0, nil }

func update(a *Account) {
	a.AddMappings("x") // want `the error returned by AddMappings is dropped`
	save()             // want `the error returned by save is dropped`
	if err := a.AddMappings("y"); err != nil {
		fmt.Println(err)
	}
	_ = a.AddMappings("z")
	a.Close()
	a.Name()
	defer a.AddMappings("d")
	go a.AddMappings("g")
	fmt.Println("x")
	os.Setenv("A", "b")
	lib.Do()
}

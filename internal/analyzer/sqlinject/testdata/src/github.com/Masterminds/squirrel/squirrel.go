// Package squirrel is a stub of github.com/Masterminds/squirrel's API.
package squirrel

type SelectBuilder struct{}

func Select(columns ...string) SelectBuilder                                      { return SelectBuilder{} }
func (b SelectBuilder) From(from string) SelectBuilder                            { return b }
func (b SelectBuilder) Where(pred interface{}, args ...interface{}) SelectBuilder { return b }
func (b SelectBuilder) ToSql() (string, []interface{}, error)                     { return "", nil, nil }

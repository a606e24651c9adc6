// Package pq is a stub of github.com/lib/pq's quoting functions.
package pq

func QuoteIdentifier(name string) string { return name }
func QuoteLiteral(literal string) string { return literal }

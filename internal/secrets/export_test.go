package secrets

// BuildForTest builds a scanner, as New does once per process.
var BuildForTest = build

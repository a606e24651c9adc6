package lib

func Do() error { return nil }

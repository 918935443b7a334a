module example.com/hello

go 1.26.0

require golang.org/x/sync v0.23.0

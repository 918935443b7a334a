// Command probe is bind-mounted into containers by tests to report what a
// process sees there (the images themselves have no shell):
//
//	probe id              prints "uid=U gid=G"
//	probe write PATH      creates PATH; exit 1 (with the error) if it cannot
//	probe serve PORT      answers HTTP GET / with "probe" on :PORT
//	probe exit N          exits with status N
package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe id | write PATH | serve PORT | exit N")
		os.Exit(2)
	}
	switch arg := func(i int) string {
		if i < len(os.Args) {
			return os.Args[i]
		}
		return ""
	}; os.Args[1] {
	case "id":
		fmt.Printf("uid=%d gid=%d\n", os.Getuid(), os.Getgid())
	case "write":
		if err := os.WriteFile(arg(2), []byte("probe\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("ok")
	case "serve":
		http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "probe") })
		fmt.Fprintln(os.Stderr, http.ListenAndServe(":"+arg(2), nil))
		os.Exit(1)
	case "exit":
		n, err := strconv.Atoi(arg(2))
		if err != nil {
			os.Exit(2)
		}
		os.Exit(n)
	default:
		os.Exit(2)
	}
}

// Command hello is compiled into a test image by testimage's own test.
package main

import (
	"fmt"
	"os"
)

func main() {
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Printf("go says %s from %s", os.Getenv("GREETING"), b)
}

package main

import (
	"bytes"
	"os"
	"testing"
)

// The README's server sample is this program, which go vet and go build check with the module.
func TestTheReadmeServerSampleIsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("```go\n"+string(program)+"```\n")) {
		t.Fatal("README.md's server sample must be examples/server/main.go, character for character: copy it over")
	}
}

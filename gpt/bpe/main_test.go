package bpe

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Getenv(gpt2DirEnv) == "" {
		fmt.Println("bpe: " + gpt2DirEnv + " is not set: the tests on GPT-2's real encoder.json and vocab.bpe are skipped")
	}
	os.Exit(m.Run())
}

//go:build unix

package guard

import "unsafe"

func unsafeAt(s []float32, i int) *float32 {
	return (*float32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), i*4))
}

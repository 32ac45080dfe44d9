package x86

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Table is a read-only table of 32-bit constants, each stored 16 times (64
// bytes), so that it is a full-width memory operand of either width or a
// broadcast source.
type Table struct{ m Mem }

// NewTable emits the table name holding vals.
func NewTable(name string, vals []uint32) Table {
	m := GLOBL(name, RODATA|NOPTR)
	for i, v := range vals {
		for j := 0; j < 16; j++ {
			DATA(64*i+4*j, U32(v))
		}
	}
	return Table{m}
}

// At returns constant i as a memory operand.
func (t Table) At(i int) Mem { return t.m.Offset(64 * i) }

// Consts are one function's view of a Table: some constants are kept in
// registers (Keep), the others are read from memory.
type Consts struct {
	s    *ISA
	t    Table
	regs map[int]reg.VecVirtual
}

// For starts a function's view of t for width s, with no constant in a
// register.
func (t Table) For(s *ISA) *Consts {
	return &Consts{s: s, t: t, regs: map[int]reg.VecVirtual{}}
}

// Mem returns constant i as a memory operand.
func (c *Consts) Mem(i int) Mem { return c.t.At(i) }

// Bcast broadcasts constant i into a new register.
func (c *Consts) Bcast(i int) reg.VecVirtual {
	v := c.s.Vec()
	VBROADCASTSS(c.t.At(i), v)
	return v
}

// Keep broadcasts each constant of is into a register of its own, which Op,
// Set and Reg then use.
func (c *Consts) Keep(is ...int) {
	for _, i := range is {
		c.regs[i] = c.Bcast(i)
	}
}

// Op returns constant i as an operand: its register if kept, else memory.
func (c *Consts) Op(i int) Op {
	if v, ok := c.regs[i]; ok {
		return v
	}
	return c.t.At(i)
}

// Load loads constant i from memory into every lane of v (a broadcast on
// AVX-512, a full-width load on AVX2).
func (c *Consts) Load(i int, v reg.VecVirtual) {
	if c.s.Is512() {
		VBROADCASTSS(c.t.At(i), v)
	} else {
		VMOVUPS(c.t.At(i), v)
	}
}

// Set copies constant i into v: from its register if kept, else Load.
func (c *Consts) Set(i int, v reg.VecVirtual) {
	if r, ok := c.regs[i]; ok {
		VMOVAPS(r, v)
		return
	}
	c.Load(i, v)
}

// Reg returns constant i in a register, for an operand that must be one:
// its own register if kept, else a new one (Set).
func (c *Consts) Reg(i int) reg.VecVirtual {
	if r, ok := c.regs[i]; ok {
		return r
	}
	v := c.s.Vec()
	c.Set(i, v)
	return v
}

/* SPDX-License-Identifier: MIT */
/*
 * Marked as the Go toolchain marks its binaries, without being one: a
 * .go.buildinfo section (GO_BUILDINFO) or a build id note of owner "Go",
 * type 4 (GO_NOTE).  Exits 3, so that a test sees it ran.
 */
#ifdef GO_BUILDINFO
__attribute__((section(".go.buildinfo"), used))
static const char buildinfo[32] = "\xff Go buildinf:";
#endif
#ifdef GO_NOTE
__asm__(".section .note.go.buildid,\"a\",%note\n"
	".balign 4\n.long 3\n.long 4\n.long 4\n.asciz \"Go\"\n.balign 4\n.ascii \"abcd\"\n"
	".previous\n");
#endif

int main(void)
{
	return 3;
}

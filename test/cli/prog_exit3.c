/* SPDX-License-Identifier: MIT */
/* Exits 3, so that a test sees it ran (built static, dynamic, Go-marked). */
int main(void)
{
	return 3;
}

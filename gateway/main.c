/* The gateway process: everything in gw_main(). */
#include "gw.h"

int main(void)
{
	return gw_main();
}

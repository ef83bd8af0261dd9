/*
 * sparkctl - main: the commands are in src/cmd/ (commands.c has the table).
 */
#include "sparkctl.h"

#include "cmd/cmd.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LEAK_CHECK 1
#endif
#endif
#ifdef HAVE_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

int main(int argc, char **argv)
{
	int code = cmd_main(argc, argv);

	if (cmd_ends_without_exit_handlers()) {
#ifdef HAVE_LEAK_CHECK
		/* _exit() skips the sanitizer's own leak check: run it first. */
		__lsan_do_leak_check();
#endif
		fflush(NULL);
		_exit(code);
	}
	return code;
}

/*
 * banned.h - libc functions sparkctl does not use.
 *
 * Each is either unbounded (strcpy, sprintf), not reentrant (strtok,
 * localtime) or silently wrong on bad input (atoi).  Use strbuf,
 * snprintf, the parse_* helpers of lib/parse.h and the _r variants.
 * Included last from sparkctl.h, after the libc headers that declare them.
 */
#ifndef SPARKCTL_BANNED_H
#define SPARKCTL_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef gmtime
#define gmtime(t) BANNED(gmtime)
#undef localtime
#define localtime(t) BANNED(localtime)
#undef ctime
#define ctime(t) BANNED(ctime)
#undef asctime
#define asctime(t) BANNED(asctime)
#undef atoi
#define atoi(s) BANNED(atoi)
#undef atol
#define atol(s) BANNED(atol)
#undef mktemp
#define mktemp(s) BANNED(mktemp)

#endif

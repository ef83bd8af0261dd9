#include "sparkctl.h"

#include "probe/hostname.h"

int hostname_read(const struct host_reader *rd, struct strbuf *out)
{
	return reader_value(rd, HOSTNAME_PATH, out);
}

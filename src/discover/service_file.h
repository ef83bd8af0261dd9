/*
 * service_file.h - avahi's service file that 'sparkctl publish' writes:
 * /etc/avahi/services/sparkctl.service, advertising _sparkctl._tcp on
 * port 22 with TXT id=, ver= and fabric= (avahi.service(5)).  avahi-daemon
 * watches the directory (inotify) and publishes a changed file by itself.
 */
#ifndef SPARKCTL_SERVICE_FILE_H
#define SPARKCTL_SERVICE_FILE_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define SERVICE_FILE_DIR  "etc/avahi/services"
#define SERVICE_FILE_NAME "sparkctl.service"
#define SERVICE_TYPE	  "_sparkctl._tcp"
#define SERVICE_PORT	  22

/*
 * The file's XML for the node id, sparkctl's version and the fabric
 * addresses (none: no fabric= record), every value XML-escaped.
 */
void service_file_xml(const char *id, const char *version, const struct strvec *fabric,
		      struct strbuf *out);

#endif

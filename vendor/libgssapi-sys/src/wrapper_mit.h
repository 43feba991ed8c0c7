#include <gssapi.h>
#include <gssapi/gssapi_ext.h>
#include "consts.h"

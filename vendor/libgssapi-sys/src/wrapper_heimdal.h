#include <gssapi.h>
#include "consts.h"

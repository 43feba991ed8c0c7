#include <GSS/GSS.h>
#include "consts.h"

typedef struct gss_cred_id_t_desc_struct gss_cred_id_struct;
typedef struct gss_name_t_desc_struct gss_name_struct;

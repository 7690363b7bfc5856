/* The header-only way: this file compiles the implementation. */
#define LUTHIER_IMPLEMENTATION
#include "luthier.h"
#include <stdio.h>

int main(void) {
    printf("header_only: %d kernels, status string '%s'\n", luthier_kernel_count(), luthier_status_string(LUTHIER_STATUS_OK));
    return luthier_kernel_count() > 0 ? 0 : 1;
}

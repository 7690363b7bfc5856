#define LUTHIER_IMPLEMENTATION /* the whole library as one object: cc -O2 -c luthier.c */
#include "luthier.h"

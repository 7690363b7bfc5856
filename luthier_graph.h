/* luthier_graph.h - graphs and plans: the execution engine of luthier.
   Part of luthier (MIT license, see luthier.h). Include luthier.h, never this file on its own. */
#ifndef LUTHIER_H_INCLUDED
#error "luthier_graph.h is part of luthier: include luthier.h instead"
#endif

#ifndef LUTHIER_GRAPH_H_INCLUDED
#define LUTHIER_GRAPH_H_INCLUDED
#endif /* LUTHIER_GRAPH_H_INCLUDED */

#if defined(LUTHIER_GRAPH_IMPLEMENTATION) && !defined(LUTHIER__GRAPH_IMPL_DONE)
#define LUTHIER__GRAPH_IMPL_DONE
#endif

B
out_scoresJ‡'?
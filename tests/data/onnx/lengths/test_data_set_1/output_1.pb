B
out_scoresJe«Z?6A?Šê>
B
out_scoresJLË?
module fx

go 1.26

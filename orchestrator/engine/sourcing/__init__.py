"""What a sweep runs, where each record comes from, its phases' clock."""

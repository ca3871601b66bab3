"""The health rules' checks and declarations, one module per family of rules; grpokit.health.table
puts them in one table."""

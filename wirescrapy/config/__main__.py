from wirescrapy.config.table import settings_table

print(settings_table())

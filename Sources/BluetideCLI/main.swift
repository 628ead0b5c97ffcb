import BluetideCommands

await BluetideMain.run()

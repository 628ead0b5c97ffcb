import BluetideCommands

await BluetideCommand.main()


B	out_boxesJ Ž‚BåW>m äBÐ~DAÑí-C£îAÓICR&„Aq3º@r»)@TÒIB9 ‚ArBïÔAÑàâBÙøA	}	CƒAÕ>½ï>CyÞuAóÓâB¥%;B`,Bè	B1ôõBfrƒ@Vp&CÄÕ–A Bv˜€AS¶›A`ùm@&‘A{™AšhBÊéB°íçB¢!ðAæÞŠB¤²—A